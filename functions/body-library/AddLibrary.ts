import { galleryHandlers } from '../../shared/galleries/handlers.ts'

export default galleryHandlers('body').addLibrary
